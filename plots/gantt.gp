# gantt.gp: one bar per request (queued, prefill, decode) over simulated time, and a tick per
# iteration start under them (request 0 at the top). Set by llmsim plot before this text: datafile, plot_title, nreq,
# tmax. Data: block 0 "req replica arrival_s scheduled_s first_token_s finish_s first_iter
# last_iter n_iters", block 1 "start_s end_s replica iter num_seqs".
set title plot_title
set xlabel 'simulated time (s)'
set ylabel 'request'
set xrange [0:tmax]
set yrange [nreq+1.8:-1]
set grid x lc rgb '#dddddd'
set key outside top center horizontal box opaque
set style fill solid 0.8 noborder
plot datafile index 0 using (($3+$4)/2):1:3:4:($1-0.4):($1+0.4) with boxxyerror lc rgb '#bbbbbb' title 'queued', \
     '' index 0 using (($4+$5)/2):1:4:5:($1-0.4):($1+0.4) with boxxyerror lc rgb '#ff7f0e' title 'prefill', \
     '' index 0 using (($5+$6)/2):1:5:6:($1-0.4):($1+0.4) with boxxyerror lc rgb '#1f77b4' title 'decode', \
     '' index 1 using 1:(nreq+0.3):(0):(1.2) with vectors nohead lw 0.5 lc rgb '#444444' title 'iteration start'
