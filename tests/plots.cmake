# Plots and trace export end to end: llmsim plot (curve, cdf, timeline, gantt) and llmsim export
# trace against a database built by llmsim run; image checks are skipped where gnuplot is absent.
llmsim_test(test_plots SOURCES test_plots.c LIBS llmsim_store ${MATH_LIB} LABELS e2e
            TIMEOUT 300)
add_dependencies(test_plots llmsim)
