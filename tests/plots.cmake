# Plots and trace export end to end: llmsim plot (curve, cdf, timeline, gantt) and llmsim export
# trace against a database built by llmsim run; image checks are skipped where gnuplot is absent.
llmsim_test(test_plots SOURCES test_plots.c LIBS llmsim_store ${MATH_LIB} LABELS e2e
            CPU 1200)
add_dependencies(test_plots llmsim)
# llmsim report (run, sweep, capacity) rendered by headless Chromium: headings, every figure
# drawn as inline SVG, nothing fetched; screenshots kept as tests/report-*.png. Skipped (77)
# without chromium or gnuplot.
llmsim_test(test_report SOURCES test_report.c LIBS llmsim_store LABELS e2e CPU 2400)
target_compile_definitions(test_report PRIVATE LLMSIM_TEST_DIR="${CMAKE_CURRENT_BINARY_DIR}")
add_dependencies(test_report llmsim)
llmsim_test(test_plots_hostile SOURCES test_plots_hostile.c LIBS llmsim_store LABELS e2e)
add_dependencies(test_plots_hostile llmsim)
