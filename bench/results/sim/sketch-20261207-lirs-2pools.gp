# cudis-sim: miss ratio against cache size for lirs-2pools (run: gnuplot sketch-20261207-lirs-2pools.gp)
set terminal pngcairo size 900,600 noenhanced
set output 'sketch-20261207-lirs-2pools.png'
set title 'cudis-sim: lirs-2pools (100000 requests, 9939 unique keys)'
set xlabel 'cache size (objects)'
set ylabel 'miss ratio'
set key top right
set grid
set yrange [0:*]
set xrange [76.8:1240]
set logscale x
plot for [i=2:7] 'sketch-20261207-lirs-2pools.dat' using 1:i with linespoints pointsize 1.2 title columnheader(i)
