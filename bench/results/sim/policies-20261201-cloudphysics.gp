# cudis-sim: miss ratio against cache size for cloudphysics (run: gnuplot policies-20261201-cloudphysics.gp)
set terminal pngcairo size 900,600 noenhanced
set output 'policies-20261201-cloudphysics.png'
set title 'cudis-sim: cloudphysics (113872 requests, 48974 unique keys)'
set xlabel 'cache size (objects)'
set ylabel 'miss ratio'
set key top right
set grid
set yrange [0:*]
set xrange [2316.19:12835.2]

plot for [i=2:7] 'policies-20261201-cloudphysics.dat' using 1:i with linespoints pointsize 1.2 title columnheader(i)
