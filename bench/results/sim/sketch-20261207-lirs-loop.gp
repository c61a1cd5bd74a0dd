# cudis-sim: miss ratio against cache size for lirs-loop (run: gnuplot sketch-20261207-lirs-loop.gp)
set terminal pngcairo size 900,600 noenhanced
set output 'sketch-20261207-lirs-loop.png'
set title 'cudis-sim: lirs-loop (505500 requests, 1011 unique keys)'
set xlabel 'cache size (objects)'
set ylabel 'miss ratio'
set key top right
set grid
set yrange [0:*]
set xrange [30.4762:100.8]

plot for [i=2:7] 'sketch-20261207-lirs-loop.dat' using 1:i with linespoints pointsize 1.2 title columnheader(i)
