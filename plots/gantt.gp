# gantt.gp: one bar per request over simulated time (request 0 at the top): queued, then each
# scheduled span as prefill and decode, the waits after a preemption, a cross where each
# preemption happened, and a tick per iteration start under the bars.
# Set by llmsim plot before this text: datafile, plot_title, nreq, tmax, nwait.
# Data: block 0 "req replica arrival_s scheduled_s first_token_s finish_s first_iter last_iter
# n_iters", block 1 "start_s end_s replica iter num_seqs", block 2 "req span start_s decode_s
# end_s ended", block 3 "req from_s to_s ended" (ended: 0 finished, 1 preempted, 2 swapped out).
set title plot_title
set xlabel 'simulated time (s)'
set ylabel 'request'
set format x '%.10g'
set xrange [0:tmax]
set yrange [nreq+1.8:-1]
set grid x lc rgb '#dddddd'
set key outside top center horizontal box opaque
set style fill solid 0.8 noborder
# the end of a span's prefill: where it began decoding, or its end when it never did
pend(d, e) = (d == d) ? d : e
cmd = "plot datafile index 0 using (($3+$4)/2):1:3:4:($1-0.4):($1+0.4) with boxxyerror lc rgb '#bbbbbb' title 'queued'"
cmd = cmd . ", '' index 2 using (($3+pend($4,$5))/2):1:3:(pend($4,$5)):($1-0.4):($1+0.4) with boxxyerror lc rgb '#ff7f0e' title 'prefill (recompute after a preemption)'"
cmd = cmd . ", '' index 2 using (($4+$5)/2):1:4:5:($1-0.4):($1+0.4) with boxxyerror lc rgb '#1f77b4' title 'decode'"
if (nwait > 0) {
    cmd = cmd . ", '' index 3 using (($2+$3)/2):1:2:3:($1-0.25):($1+0.25) with boxxyerror fs solid 0.35 lc rgb '#d62728' title 'waiting after a preemption'"
    cmd = cmd . ", '' index 3 using 2:1 with points pt 2 ps 1.2 lw 2 lc rgb '#d62728' title 'preempted'"
}
cmd = cmd . ", '' index 1 using 1:(nreq+0.3):(0):(1.2) with vectors nohead lw 0.5 lc rgb '#444444' title 'iteration start'"
eval cmd
