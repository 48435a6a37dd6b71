# cdf.gp: latency CDFs of several runs on one chart.
# Set by llmsim plot before this text: datafile, plot_title, xlabel, nseries, titles[nseries],
# logx. Data: block i-1 for run i, columns value_ms fraction (sorted; the last fraction is 1).
set title plot_title
set xlabel xlabel
set ylabel 'fraction of finished requests'
set grid lc rgb '#dddddd'
set key bottom right box opaque
set yrange [0:1.02]
if (logx) { set logscale x }
set style line 1 lc rgb '#1f77b4' lw 2
set style line 2 lc rgb '#d62728' lw 2
set style line 3 lc rgb '#2ca02c' lw 2
set style line 4 lc rgb '#ff7f0e' lw 2
set style line 5 lc rgb '#9467bd' lw 2
set style line 6 lc rgb '#8c564b' lw 2
set style line 7 lc rgb '#e377c2' lw 2
set style line 8 lc rgb '#7f7f7f' lw 2
plot for [i=1:nseries] datafile index (i-1) using 1:2 with steps ls (i-1)%8+1 title titles[i]
