"""The exercises of the prefix-products round (torch): Prefix matrix products with hand-written
autograd.

Fill in part1_inplace.py, part2_out_of_place.py, part3_backward.py, part4_scan.py.
"""
