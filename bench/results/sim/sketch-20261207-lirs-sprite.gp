# cudis-sim: miss ratio against cache size for lirs-sprite (run: gnuplot sketch-20261207-lirs-sprite.gp)
set terminal pngcairo size 900,600 noenhanced
set output 'sketch-20261207-lirs-sprite.png'
set title 'cudis-sim: lirs-sprite (133996 requests, 7075 unique keys)'
set xlabel 'cache size (objects)'
set ylabel 'miss ratio'
set key top right
set grid
set yrange [0:*]
set xrange [51.2:880]
set logscale x
plot for [i=2:7] 'sketch-20261207-lirs-sprite.dat' using 1:i with linespoints pointsize 1.2 title columnheader(i)
