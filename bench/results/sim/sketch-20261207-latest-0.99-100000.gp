# cudis-sim: miss ratio against cache size for latest-0.99-100000 (run: gnuplot sketch-20261207-latest-0.99-100000.gp)
set terminal pngcairo size 900,600 noenhanced
set output 'sketch-20261207-latest-0.99-100000.png'
set title 'cudis-sim: latest-0.99-100000 (1000000 requests, 110526 unique keys)'
set xlabel 'cache size (objects)'
set ylabel 'miss ratio'
set key top right
set grid
set yrange [0:*]
set xrange [870.4:13800]
set logscale x
plot for [i=2:7] 'sketch-20261207-latest-0.99-100000.dat' using 1:i with linespoints pointsize 1.2 title columnheader(i)
