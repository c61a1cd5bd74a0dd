# cudis-sim: miss ratio against cache size for cloudphysics (run: gnuplot beyond-lru-20261206b-cloudphysics.gp)
set terminal pngcairo size 900,600 noenhanced
set output 'beyond-lru-20261206b-cloudphysics.png'
set title 'cudis-sim: cloudphysics (113872 requests, 48974 unique keys)'
set xlabel 'cache size (objects)'
set ylabel 'miss ratio'
set key top right
set grid
set yrange [0:*]
set xrange [384:6120]
set logscale x
plot for [i=2:10] 'beyond-lru-20261206b-cloudphysics.dat' using 1:i with linespoints pointsize 1.2 title columnheader(i)
