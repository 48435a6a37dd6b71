# validation.gp: predicted against measured for a stored validation, log-log, with the line
# y = x (a perfect prediction); one panel per metric, one colour per group.
# Set by llmsim plot before this text: datafile, plot_title, nmetrics, mtitles[nmetrics],
# mfirst[nmetrics] and mcount[nmetrics] (the data blocks of each metric), lo[nmetrics] and
# hi[nmetrics] (each panel's range), ngroups, gtitles[ngroups], bgroup[nblocks] (each block's
# group, from 1). Data: one block per (metric, group) with points, columns measured predicted.
set multiplot layout 1,nmetrics title plot_title
set grid lc rgb '#dddddd'
set logscale xy
set size ratio -1
set key top left box opaque font ',8' spacing 0.9
set style line 1 lc rgb '#1f77b4' pt 7
set style line 2 lc rgb '#d62728' pt 5
set style line 3 lc rgb '#2ca02c' pt 9
set style line 4 lc rgb '#ff7f0e' pt 11
set style line 5 lc rgb '#9467bd' pt 13
set style line 6 lc rgb '#8c564b' pt 7
set style line 7 lc rgb '#e377c2' pt 5
set style line 8 lc rgb '#7f7f7f' pt 9
set style line 9 lc rgb '#bcbd22' pt 11
set style line 10 lc rgb '#17becf' pt 13
set style line 11 lc rgb '#000000' pt 7
set style line 12 lc rgb '#aec7e8' pt 5
do for [m=1:nmetrics] {
    set title mtitles[m]
    set xlabel 'measured'
    set ylabel 'predicted'
    set xrange [lo[m]:hi[m]]
    set yrange [lo[m]:hi[m]]
    plot for [b=mfirst[m]:mfirst[m]+mcount[m]-1] datafile index b using 1:2 with points \
             ls (bgroup[b+1]-1)%12+1 ps 0.6 title gtitles[bgroup[b+1]], \
         x with lines lc rgb '#444444' dt 2 lw 1.5 title 'y = x'
}
unset multiplot
