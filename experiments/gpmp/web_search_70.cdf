# Web search (HPCC WebSearch_distribution.txt, bytes and percent) with its 80 KB-1 MB band
# moved below 100 KB, so that 70 % of messages are smaller than 100 KB, as the GPMP summary
# describes its workload ("70% of messages < 100KB"); the built-in web_search has 54 % below
# 100 KB (70 % below 1 MB). Everything else is unchanged: 40 % of messages are < 50 KB, and the
# tail from 2 MB to 30 MB is the same. Our construction, not a published CDF.
0 0
10000 15
20000 20
30000 30
50000 40
80000 53
90000 60
100000 70
2000000 80
5000000 90
10000000 97
30000000 100
