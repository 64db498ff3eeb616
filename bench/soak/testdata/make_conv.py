# Writes conv_leaky.pt: the state_dict of a Conv2d(1, 4, 3) followed by an
# snnTorch Leaky, as torch.save writes it, for bench/soak -hostile (a small
# file whose declared input shape asks for a large network).
# Run with Debian's PyTorch: /usr/bin/python3 make_conv.py
import collections

import torch

torch.manual_seed(0)
sd = collections.OrderedDict([
    ("0.weight", torch.randn(4, 1, 3, 3) * 0.3),
    ("0.bias", torch.zeros(4)),
    ("1.threshold", torch.tensor(1.0)),
    ("1.graded_spikes_factor", torch.tensor(1.0)),
    ("1.reset_mechanism_val", torch.tensor(0.0)),
    ("1.beta", torch.tensor(0.9)),
])
torch.save(sd, "conv_leaky.pt")
