# probes.gp: a capacity search's probes: a latency percentile against the offered rate, one
# line per choice, filled points where the probe met every SLO, hollow where it did not, and
# the SLO as a dashed line (slo < 0: none).
# Set by llmsim plot before this text: datafile, plot_title, ylabel, nseries, titles[nseries],
# slo. Data: block i-1 for choice i, columns rate y ok saturated seq.
set title plot_title
set xlabel 'offered rate per replica (req/s)'
set ylabel ylabel
set grid lc rgb '#dddddd'
set key outside right top box
set format x '%.10g'
set format y '%.10g'
set logscale y
set style line 1 lc rgb '#1f77b4' lw 1.5
set style line 2 lc rgb '#d62728' lw 1.5
set style line 3 lc rgb '#2ca02c' lw 1.5
set style line 4 lc rgb '#ff7f0e' lw 1.5
set style line 5 lc rgb '#9467bd' lw 1.5
set style line 6 lc rgb '#8c564b' lw 1.5
cmd = "plot for [i=1:nseries] datafile index (i-1) using 1:2 with lines ls (i-1)%6+1 title titles[i]"
cmd = cmd . ", for [i=1:nseries] datafile index (i-1) using 1:($3 > 0 ? $2 : 1/0) with points ls (i-1)%6+1 pt 7 ps 1.3 notitle"
cmd = cmd . ", for [i=1:nseries] datafile index (i-1) using 1:($3 > 0 ? 1/0 : $2) with points ls (i-1)%6+1 pt 6 ps 1.3 notitle"
if (slo > 0) {
    cmd = cmd . sprintf(", %g with lines dt 2 lw 1.5 lc rgb 'black' title 'SLO'", slo)
}
eval cmd
