# store/: the results database: identity and schema version, refusal of foreign databases, the
# version-1 upgrade, views, read cursors and queries, capacity tables (temporary databases only).
llmsim_test(test_store SOURCES test_store.c LIBS llmsim_store ${MATH_LIB} LABELS store unit)
# runs spooled to a file and replayed into a database (the sweep's one writer): equal rows, a
# damaged spool commits nothing, a declining hook rolls back quietly, flat memory while spooling
llmsim_test(test_store_spool SOURCES test_store_spool.c LIBS llmsim_store LABELS store unit)
# a WAL database on a read-only medium is read (immutable), a leftover -wal there refused
llmsim_test(test_store_readonly SOURCES test_store_readonly.c LIBS llmsim_store LABELS store unit)
# one database shared by several processes: four writers at once, no lock while simulating,
# the lock's holder named
llmsim_test(test_store_concurrent SOURCES test_store_concurrent.c LIBS llmsim_store LABELS store e2e)
add_dependencies(test_store_concurrent llmsim)
# a validate or capacity search killed part way: nothing left to pile up; capacity resumes
llmsim_test(test_killed_work SOURCES test_killed_work.c LIBS llmsim_store LABELS store e2e)
add_dependencies(test_killed_work llmsim)
# a failed merge or a new database on a full disk leaves no file it created
llmsim_test(test_store_outputs SOURCES test_store_outputs.c LIBS llmsim_store LABELS store e2e)
add_dependencies(test_store_outputs llmsim)
# a new database another process is creating at the same path is left to it (the interleaving
# made with a stat() that lets a child create the file and take SQLite's RESERVED lock)
llmsim_test(test_store_create_race SOURCES test_store_create_race.c LIBS llmsim_store LABELS store unit)
