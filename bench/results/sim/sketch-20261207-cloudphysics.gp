# cudis-sim: miss ratio against cache size for cloudphysics (run: gnuplot sketch-20261207-cloudphysics.gp)
set terminal pngcairo size 900,600 noenhanced
set output 'sketch-20261207-cloudphysics.png'
set title 'cudis-sim: cloudphysics (113872 requests, 48974 unique keys)'
set xlabel 'cache size (objects)'
set ylabel 'miss ratio'
set key top right
set grid
set yrange [0:*]
set xrange [384:6120]
set logscale x
plot for [i=2:7] 'sketch-20261207-cloudphysics.dat' using 1:i with linespoints pointsize 1.2 title columnheader(i)
