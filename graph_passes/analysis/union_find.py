"""Disjoint sets of hashable items (path halving): the loop dims ``hfusion-flatten-ops`` ties together, the parts of a
kernel body ``kernel_layout`` places."""

from __future__ import annotations


class UnionFind:
    def __init__(self):
        self.parent: dict = {}

    def find(self, x):
        self.parent.setdefault(x, x)
        while self.parent[x] != x:
            self.parent[x] = self.parent[self.parent[x]]
            x = self.parent[x]
        return x

    def union(self, a, b):
        self.parent[self.find(a)] = self.find(b)
