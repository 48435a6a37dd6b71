# timeline.gp: per iteration, the sequences in the batch (filled boxes spanning the iteration,
# left axis) and the KV blocks in use (line, right axis) against the KV capacity of a replica
# (dashed), with a cross at each iteration whose forming preempted requests; one panel per run,
# same time axis.
# Set by llmsim plot before this text: datafile, plot_title, nseries, titles[nseries], tmax,
# replicas, kvcap[nseries] (blocks; 0 = not stored), npre[nseries] (preemptions).
# Data: block i-1 for run i, columns start_s end_s replica num_seqs kv_blocks prefill_tokens
# decode_tokens preempted.
set multiplot layout nseries,1 title plot_title
set grid lc rgb '#dddddd'
set xrange [0:tmax]
set yrange [0:*]
set ylabel 'sequences in batch' tc rgb '#1f77b4'
set y2label 'KV blocks' tc rgb '#d62728'
set ytics nomirror tc rgb '#1f77b4'
set y2tics tc rgb '#d62728'
set format x '%.10g'
set format y '%.10g'
set format y2 '%.10g'
set style fill solid 0.45 noborder
set lmargin 10
set rmargin 12
do for [i=1:nseries] {
    set title titles[i]
    if (kvcap[i] > 0) { set y2range [0:kvcap[i]*1.08] } else { set y2range [0:*] }
    if (i == 1) { set key top right box opaque } else { unset key }
    if (i == nseries) { set xlabel 'simulated time (s)' } else { unset xlabel }
    if (replicas > 1) {
        cmd = "plot datafile index (i-1) using (($1+$2)/2):($4/2):1:2:(0):4:($3+1) with boxxyerror lc variable title 'sequences in batch (colour: replica)'"
    } else {
        cmd = "plot datafile index (i-1) using (($1+$2)/2):($4/2):1:2:(0):4 with boxxyerror lc rgb '#1f77b4' title 'sequences in batch'"
    }
    cmd = cmd . ", '' index (i-1) using 1:5 axes x1y2 with steps lc rgb '#d62728' lw 1.5 title 'KV blocks in use'"
    if (kvcap[i] > 0) {
        cmd = cmd . sprintf(", %d axes x1y2 with lines dt 2 lw 1.5 lc rgb '#7f0000' title 'KV capacity (%d blocks)'", kvcap[i], kvcap[i])
    }
    if (npre[i] > 0) {
        cmd = cmd . ", '' index (i-1) using 1:($8 > 0 ? $5 : 1/0) axes x1y2 with points pt 2 ps 1.3 lw 2 lc rgb '#000000' title 'preemptions'"
    }
    eval cmd
}
unset multiplot
