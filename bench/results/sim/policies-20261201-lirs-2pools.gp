# cudis-sim: miss ratio against cache size for lirs-2pools (run: gnuplot policies-20261201-lirs-2pools.gp)
set terminal pngcairo size 900,600 noenhanced
set output 'policies-20261201-lirs-2pools.png'
set title 'cudis-sim: lirs-2pools (100000 requests, 9939 unique keys)'
set xlabel 'cache size (objects)'
set ylabel 'miss ratio'
set key top right
set grid
set yrange [0:*]
set xrange [457.143:2587.2]

plot for [i=2:7] 'policies-20261201-lirs-2pools.dat' using 1:i with linespoints pointsize 1.2 title columnheader(i)
