# fleet.gp: an autoscaled fleet over time, three panels on one time axis: the offered load
# (arrivals per second per window), the replicas (serving: routed to; held: serving, starting
# and draining, the GPUs paid for), and the p99 TTFT of the first tokens of each window (log
# scale) with the share of the window's requests within every SLO (right axis; a rejection is a
# miss). One line per run; with prefill and decode pools (haspools), each pool's serving
# replicas too (dash-dot: prefill, dotted: decode).
# Set by llmsim plot before this text: datafile, plot_title, nseries, titles[nseries], tmax,
# tunit ('s' or 'h'), haspools (1: a run has prefill and decode pools). Data: block i-1 for run
# i, columns t_mid start end offered_rate serving held p99_ttft_ms slo_attainment
# prefill_serving prefill_held decode_serving decode_held (times in tunit; NaN where a window
# has no value, and in the pools' columns of an aggregated run).
set multiplot layout 3,1 title plot_title
set grid lc rgb '#dddddd'
set xrange [0:tmax]
set format x '%.10g'
set lmargin 12
set rmargin 12
set style line 1 lc rgb '#1f77b4' lw 1.5
set style line 2 lc rgb '#d62728' lw 1.5
set style line 3 lc rgb '#2ca02c' lw 1.5
set style line 4 lc rgb '#ff7f0e' lw 1.5
set style line 5 lc rgb '#9467bd' lw 1.5
set style line 6 lc rgb '#8c564b' lw 1.5
set style line 7 lc rgb '#e377c2' lw 1.5
set style line 8 lc rgb '#7f7f7f' lw 1.5
unset xlabel
set key top right box opaque
set title 'offered load'
set ylabel 'requests/s'
set yrange [0:*]
plot for [i=1:nseries] datafile index (i-1) using 2:4 with steps ls (i-1)%8+1 title titles[i]
set ylabel 'replicas'
unset key
if (haspools) {
  set title 'replicas (solid: serving; dashed: held; dash-dot: prefill serving; dotted: decode serving)'
  plot for [i=1:nseries] datafile index (i-1) using 2:5 with steps ls (i-1)%8+1 notitle, \
       for [i=1:nseries] datafile index (i-1) using 2:6 with steps ls (i-1)%8+1 dt 2 notitle, \
       for [i=1:nseries] datafile index (i-1) using 2:9 with steps ls (i-1)%8+1 dt 4 notitle, \
       for [i=1:nseries] datafile index (i-1) using 2:11 with steps ls (i-1)%8+1 dt 3 notitle
} else {
  set title 'replicas (solid: serving; dashed: held, starting and draining included)'
  plot for [i=1:nseries] datafile index (i-1) using 2:5 with steps ls (i-1)%8+1 notitle, \
       for [i=1:nseries] datafile index (i-1) using 2:6 with steps ls (i-1)%8+1 dt 2 notitle
}
set title 'p99 TTFT per window (solid, left) and requests within the SLO (dotted, right)'
set xlabel sprintf('simulated time (%s)', tunit)
set ylabel 'p99 TTFT (ms)'
set logscale y
set yrange [*:*]
set y2label 'within SLO'
set y2range [0:1.05]
set y2tics
set ytics nomirror
plot for [i=1:nseries] datafile index (i-1) using 1:7 with lines ls (i-1)%8+1 notitle, \
     for [i=1:nseries] datafile index (i-1) using 1:8 axes x1y2 with lines ls (i-1)%8+1 dt 3 notitle
unset multiplot
