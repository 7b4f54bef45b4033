# shapes-base: word_language_model_transformer
# shapes-inputs: src=[9,4]:i64
# shapes-wrong-input: embedding_float_index input:forward src=[9,4]
# shapes-wrong-input: broadcast input:submodule src=[80,4]:i64
import math

import torch
import torch.nn.functional as F
from torch import nn

# @module


class PositionalEncoding(nn.Module):
    def __init__(self, d_model, dropout=0.1, max_len=64):
        super().__init__()
        self.dropout = nn.Dropout(p=dropout)
        pe = torch.zeros(max_len, d_model)
        position = torch.arange(0, max_len, dtype=torch.float).unsqueeze(1)
        div_term = torch.exp(torch.arange(0, d_model, 2).float() * (-math.log(10000.0) / d_model))
        pe[:, 0::2] = torch.sin(position * div_term)
        pe[:, 1::2] = torch.cos(position * div_term)
        pe = pe.unsqueeze(0).transpose(0, 1)
        self.register_buffer("pe", pe)

    def forward(self, x):
        x = x + self.pe[:x.size(0), :]
        return self.dropout(x)


class Model(nn.Module):
    """Container module with an encoder, a transformer encoder stack and a decoder."""

    def __init__(self, ntoken=60, ninp=32, nhead=4, nhid=64, nlayers=2, dropout=0.1):
        super().__init__()
        self.pos_encoder = PositionalEncoding(ninp, dropout)
        encoder_layers = nn.TransformerEncoderLayer(ninp, nhead, nhid, dropout)
        self.transformer_encoder = nn.TransformerEncoder(encoder_layers, nlayers, enable_nested_tensor=False)
        self.encoder = nn.Embedding(ntoken, ninp)
        self.ninp = ninp
        self.decoder = nn.Linear(ninp, ntoken)
        # @init Model

    # @methods Model
    def _generate_square_subsequent_mask(self, sz):
        return torch.log(torch.tril(torch.ones(sz, sz)))

    def forward(self, src):
        mask = self._generate_square_subsequent_mask(src.size(0))
        src = self.encoder(src) * math.sqrt(self.ninp)
        src = self.pos_encoder(src)
        # @point Model src 9,4,32
        output = self.transformer_encoder(src, mask)
        # @point Model output 9,4,32
        output = self.decoder(output)
        return F.log_softmax(output, dim=-1)
