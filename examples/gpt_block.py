"""A GPT-style block that trains: embedding, layer norm, attention with a causal mask, GELU MLP, cross-entropy loss.

Used by ``benchmarks/model_step.py`` (one training step, where the simulated time goes) and by
``tests/backend/test_models.py`` (the step matches eager)."""

from __future__ import annotations

import torch
import torch.nn as nn
import torch.nn.functional as F


class GPTBlock(nn.Module):
    def __init__(self, d: int = 32, heads: int = 4, vocab: int = 50):
        super().__init__()
        self.vocab, self.heads = vocab, heads
        self.emb = nn.Embedding(vocab, d)
        self.ln1, self.ln2 = nn.LayerNorm(d), nn.LayerNorm(d)
        self.qkv, self.proj = nn.Linear(d, 3 * d), nn.Linear(d, d)
        self.fc1, self.fc2 = nn.Linear(d, 4 * d), nn.Linear(4 * d, d)
        self.head = nn.Linear(d, vocab)

    def forward(self, idx):
        x = self.emb(idx)
        b, t, d = x.shape
        q, k, v = self.qkv(self.ln1(x)).split(d, -1)
        q, k, v = [z.view(b, t, self.heads, d // self.heads).transpose(1, 2) for z in (q, k, v)]
        att = (q @ k.transpose(-1, -2)) / (d // self.heads) ** 0.5
        causal = torch.ones(t, t, dtype=torch.bool).tril()
        att = att.masked_fill(~causal, float("-inf")).softmax(-1)
        x = x + self.proj((att @ v).transpose(1, 2).reshape(b, t, d))
        x = x + self.fc2(F.gelu(self.fc1(self.ln2(x))))
        return F.cross_entropy(self.head(x).view(-1, self.vocab), idx.view(-1))
