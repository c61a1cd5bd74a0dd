# cudis-sim: miss ratio against cache size for cloudphysics (run: gnuplot curves-cloudphysics.gp)
set terminal pngcairo size 900,600 noenhanced
set output 'curves-cloudphysics.png'
set title 'cudis-sim: cloudphysics (113872 requests, 48974 unique keys)'
set xlabel 'cache size (objects)'
set ylabel 'miss ratio'
set key top right
set grid
set yrange [0:*]
set xrange [384:30600]
set logscale x
plot for [i=2:7] 'curves-cloudphysics.dat' using 1:i with linespoints pointsize 1.2 title columnheader(i)
