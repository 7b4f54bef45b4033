# The forward methods of torch.nn leaf modules, as functions named after the class, for a
# subclass defined outside torch.nn. torch.fx keeps only modules of torch.nn itself as leaves,
# so a subclass (`class Embedding(nn.Embedding)`) is traced through: its own forward, its
# `super().forward(x)`, or the inherited forward run the base's functional call, and the
# parameters are read as attributes. Each body makes the call torch.nn's own forward makes.
# A class missing here stays one `call_module` node.

import torch
import torch.nn.functional as F


def Identity(self, input, *args, **kwargs):
    return input


def Linear(self, input):
    return F.linear(input, self.weight, self.bias)


def Bilinear(self, input1, input2):
    return F.bilinear(input1, input2, self.weight, self.bias)


def Embedding(self, input):
    return F.embedding(
        input,
        self.weight,
        self.padding_idx,
        self.max_norm,
        self.norm_type,
        self.scale_grad_by_freq,
        self.sparse,
    )


def LayerNorm(self, input):
    return F.layer_norm(input, self.normalized_shape, self.weight, self.bias, self.eps)


def GroupNorm(self, input):
    return F.group_norm(input, self.num_groups, self.weight, self.bias, self.eps)


def RMSNorm(self, x):
    return F.rms_norm(x, self.normalized_shape, self.weight, self.eps)


def _reversed_padding_repeated_twice(padding):
    return [p for p in reversed(padding) for _ in range(2)]


def Conv1d(self, input):
    if self.padding_mode != "zeros":
        padded = F.pad(input, _reversed_padding_repeated_twice(self.padding), mode=self.padding_mode)
        return F.conv1d(padded, self.weight, self.bias, self.stride, (0,), self.dilation, self.groups)
    return F.conv1d(input, self.weight, self.bias, self.stride, self.padding, self.dilation, self.groups)


def Conv2d(self, input):
    if self.padding_mode != "zeros":
        padded = F.pad(input, _reversed_padding_repeated_twice(self.padding), mode=self.padding_mode)
        return F.conv2d(padded, self.weight, self.bias, self.stride, (0, 0), self.dilation, self.groups)
    return F.conv2d(input, self.weight, self.bias, self.stride, self.padding, self.dilation, self.groups)


def Conv3d(self, input):
    if self.padding_mode != "zeros":
        padded = F.pad(input, _reversed_padding_repeated_twice(self.padding), mode=self.padding_mode)
        return F.conv3d(padded, self.weight, self.bias, self.stride, (0, 0, 0), self.dilation, self.groups)
    return F.conv3d(input, self.weight, self.bias, self.stride, self.padding, self.dilation, self.groups)


def Dropout(self, input):
    return F.dropout(input, self.p, self.training, self.inplace)


def ReLU(self, input):
    return F.relu(input, inplace=self.inplace)


def GELU(self, input):
    return F.gelu(input, approximate=self.approximate)


def SiLU(self, input):
    return F.silu(input, inplace=self.inplace)


def Tanh(self, input):
    return torch.tanh(input)


def Sigmoid(self, input):
    return torch.sigmoid(input)


def Softmax(self, input):
    return F.softmax(input, self.dim, _stacklevel=5)
