# cudis-sim: miss ratio against cache size for cloudphysics (run: gnuplot bytes-cloudphysics.gp)
set terminal pngcairo size 900,600 noenhanced
set output 'bytes-cloudphysics.png'
set title 'cudis-sim: cloudphysics (113872 requests, 48974 unique keys)'
set xlabel 'cache size (MiB)'
set ylabel 'miss ratio'
set key top right
set grid
set yrange [0:*]
set xrange [51.2:1280]
set logscale x
plot for [i=2:6] 'bytes-cloudphysics.dat' using 1:i with linespoints pointsize 1.2 title columnheader(i)
