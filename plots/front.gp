# front.gp: a recommendation's Pareto front: output tokens/s per GPU against output tokens/s
# per user, one point set per simulated candidate, the confirmed front as a black line.
# Set by llmsim plot before this text: datafile, plot_title, xlabel, ylabel, nseries,
# titles[nseries], nfront. Data: block i-1 for candidate i, columns x y front; block nseries:
# the front, x y.
set title plot_title
set xlabel xlabel
set ylabel ylabel
set grid lc rgb '#dddddd'
set key outside right top box
set format x '%.10g'
set format y '%.10g'
set xrange [0:*]
set yrange [0:*]
set style line 1 lc rgb '#1f77b4' pt 7 ps 1.2
set style line 2 lc rgb '#d62728' pt 5 ps 1.2
set style line 3 lc rgb '#2ca02c' pt 9 ps 1.4
set style line 4 lc rgb '#ff7f0e' pt 11 ps 1.4
set style line 5 lc rgb '#9467bd' pt 13 ps 1.4
set style line 6 lc rgb '#8c564b' pt 3 ps 1.2
set style line 7 lc rgb '#e377c2' pt 1 ps 1.2
set style line 8 lc rgb '#7f7f7f' pt 2 ps 1.2
cmd = "plot for [i=1:nseries] datafile index (i-1) using 1:2 with points ls (i-1)%8+1 title titles[i]"
if (nfront > 0) {
    cmd = cmd . ", datafile index nseries using 1:2 with linespoints lw 2 lc rgb 'black' pt 6 ps 2 title 'Pareto front (confirmed)'"
}
eval cmd
