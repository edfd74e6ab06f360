"""Sleeps before answering, holding its sandbox and a grading worker without using the CPU:
the judge counts a child's sleep like its work, so it is cut off after one timeout's worth."""

import time

EXPLANATION = ""


def prefix_products_out(W, P):
    time.sleep(60)
    return P
