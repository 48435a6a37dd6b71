llmsim_test(test_sweep SOURCES test_sweep.c LIBS llmsim_store LABELS e2e CPU 2400)
add_dependencies(test_sweep llmsim)
# the worker pool: 100,000 tasks, outputs through the spools, failures, skips, a dying worker
llmsim_test(test_pool SOURCES test_pool.c LIBS llmsim_study LABELS unit CPU 1200)
# sweeps at scale end to end: one writer under a long external lock, two identical sweeps at
# once, 30,000 tasks, shards merged to the whole sweep's bytes, merge's refusals
llmsim_test(test_sweep_scale SOURCES test_sweep_scale.c LIBS llmsim_store LABELS e2e CPU 3600)
add_dependencies(test_sweep_scale llmsim)
# docs/sweeps.md's recipe end to end: shards run by GNU parallel (`-S :`), one resumed with
# --resume-failed from the job log, merged, compared with the whole sweep (skipped without
# GNU parallel; scripts/setup.sh installs it)
llmsim_add_test(test_sweep_parallel CPU 1200
         sh ${CMAKE_CURRENT_SOURCE_DIR}/scripts/sweep_parallel.sh ${CMAKE_BINARY_DIR}/llmsim)
set_tests_properties(test_sweep_parallel PROPERTIES LABELS "e2e" SKIP_RETURN_CODE 77)
# a sweep's grid: point counts checked, values never cut short, ';' refused
llmsim_test(test_sweep_grid SOURCES test_sweep_grid.c LIBS llmsim_study LABELS unit)
# a merge into a new OUT while another process opens OUT: a failed merge leaves that process's
# database, a finished one adds its runs to it, no private file is left
llmsim_test(test_merge_output_race SOURCES test_merge_output_race.c LIBS llmsim_study LABELS unit)
