# store/: the results database: identity and schema version, refusal of foreign databases, the
# version-1 upgrade, views, read cursors and queries, capacity tables (temporary databases only).
llmsim_test(test_store SOURCES test_store.c LIBS llmsim_store ${MATH_LIB} LABELS store unit)
