llmsim_test(test_engine SOURCES test_engine.c LIBS llmsim_engine)
llmsim_test(test_engine_router SOURCES test_engine_router.c LIBS llmsim_engine)
