llmsim_test(test_engine SOURCES test_engine.c LIBS llmsim_engine)
