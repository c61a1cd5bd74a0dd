# cudis-sim: miss ratio against cache size for cache2k-web12 (run: gnuplot sketch-20261207-cache2k-web12.gp)
set terminal pngcairo size 900,600 noenhanced
set output 'sketch-20261207-cache2k-web12.png'
set title 'cudis-sim: cache2k-web12 (95607 requests, 13756 unique keys)'
set xlabel 'cache size (objects)'
set ylabel 'miss ratio'
set key top right
set grid
set yrange [0:*]
set xrange [102.4:1680]
set logscale x
plot for [i=2:7] 'sketch-20261207-cache2k-web12.dat' using 1:i with linespoints pointsize 1.2 title columnheader(i)
