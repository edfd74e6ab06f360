"""The exercises of the autograd-pitfalls round (torch): five short pieces of training code,
each with one autograd bug to find, fix and explain."""
