# curve.gp: latency against throughput or offered rate, one line per series, from a sweep.
# Set by llmsim plot before this text: datafile, plot_title, xlabel, ylabel, keytitle, nseries,
# titles[nseries], has_ci (draw 95% CI bars), nsat (saturated points, in block nseries),
# nsat_all (saturated in every repetition), nsat_some (in only some), logy, nrej (points whose
# runs rejected requests, in block rej_block: x y series rejected reps).
# Data: block i-1 for series i, columns x y y_lo y_hi x_lo x_hi saturated reps point; block
# nseries: x y series saturated reps.
set title plot_title
set xlabel xlabel
set ylabel ylabel
set grid lc rgb '#dddddd'
set key outside right top box title keytitle
set format x '%.10g'
set format y '%.10g'
set xrange [0:*]
if (logy) { set logscale y } else { set yrange [0:*] }
set style line 1 lc rgb '#1f77b4' lw 2 pt 7 ps 1.2
set style line 2 lc rgb '#d62728' lw 2 pt 5 ps 1.2
set style line 3 lc rgb '#2ca02c' lw 2 pt 9 ps 1.4
set style line 4 lc rgb '#ff7f0e' lw 2 pt 11 ps 1.4
set style line 5 lc rgb '#9467bd' lw 2 pt 13 ps 1.4
set style line 6 lc rgb '#8c564b' lw 2 pt 3 ps 1.2
set style line 7 lc rgb '#e377c2' lw 2 pt 1 ps 1.2
set style line 8 lc rgb '#7f7f7f' lw 2 pt 2 ps 1.2

cmd = "plot for [i=1:nseries] datafile index (i-1) using 1:2 with linespoints ls (i-1)%8+1 title titles[i]"
if (has_ci) {
    cmd = cmd . ", for [i=1:nseries] datafile index (i-1) using 1:2:5:6:3:4 with xyerrorbars ls (i-1)%8+1 pt 0 notitle"
}
if (nsat_all > 0) {
    cmd = cmd . ", datafile index nseries using 1:($4 >= $5 ? $2 : 1/0) with points pt 6 ps 3 lw 2 lc rgb 'black' title 'saturated (every repetition)'"
}
if (nsat_some > 0) {
    cmd = cmd . ", datafile index nseries using 1:($4 < $5 ? $2 : 1/0) with points pt 6 ps 3 lw 1.5 dt 2 lc rgb '#555555' title 'saturated in k of n repetitions'"
    cmd = cmd . ", datafile index nseries using 1:($4 < $5 ? $2 : 1/0):(sprintf('%d of %d', $4, $5)) with labels offset 0,1.8 font ',8' tc rgb '#555555' notitle"
}
if (nrej > 0) {
    cmd = cmd . ", datafile index rej_block using 1:2 with points pt 2 ps 3 lw 2 lc rgb '#d62728' title 'rejected requests (not in the latencies)'"
    cmd = cmd . ", datafile index rej_block using 1:2:(sprintf('%.0f rejected', $4)) with labels offset 0,-1.8 font ',8' tc rgb '#d62728' notitle"
}
eval cmd
