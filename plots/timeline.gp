# timeline.gp: per iteration, the sequences in the batch (filled boxes spanning the iteration,
# left axis) and the KV blocks in use (line, right axis); one panel per run, same time axis.
# Set by llmsim plot before this text: datafile, plot_title, nseries, titles[nseries], tmax,
# replicas. Data: block i-1 for run i, columns start_s end_s replica num_seqs kv_blocks
# prefill_tokens decode_tokens.
set multiplot layout nseries,1 title plot_title
set grid lc rgb '#dddddd'
set xrange [0:tmax]
set yrange [0:*]
set y2range [0:*]
set ylabel 'sequences in batch' tc rgb '#1f77b4'
set y2label 'KV blocks in use' tc rgb '#d62728'
set ytics nomirror tc rgb '#1f77b4'
set y2tics tc rgb '#d62728'
set style fill solid 0.45 noborder
set lmargin 10
set rmargin 12
do for [i=1:nseries] {
    set title titles[i]
    if (i == 1) { set key top right box opaque } else { unset key }
    if (i == nseries) { set xlabel 'simulated time (s)' } else { unset xlabel }
    if (replicas > 1) {
        plot datafile index (i-1) using (($1+$2)/2):($4/2):1:2:(0):4:($3+1) with boxxyerror lc variable title 'sequences in batch (colour: replica)', \
             '' index (i-1) using 1:5 axes x1y2 with steps lc rgb '#d62728' lw 1.5 title 'KV blocks in use'
    } else {
        plot datafile index (i-1) using (($1+$2)/2):($4/2):1:2:(0):4 with boxxyerror lc rgb '#1f77b4' title 'sequences in batch', \
             '' index (i-1) using 1:5 axes x1y2 with steps lc rgb '#d62728' lw 1.5 title 'KV blocks in use'
    }
}
unset multiplot
