"""The fixed exercises of the autograd-pitfalls round (torch): each part's one autograd bug
fixed and explained."""
