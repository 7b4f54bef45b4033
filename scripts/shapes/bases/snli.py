# shapes-base: snli
# shapes-inputs: premise=[9,4]:i64 hypothesis=[7,4]:i64
# shapes-wrong-input: embedding_float_index input:forward premise=[9,4] hypothesis=[7,4]:i64
# shapes-wrong-input: broadcast input:forward premise=[9,4]:i64 hypothesis=[7,5]:i64
import torch
import torch.nn.functional as F
from torch import nn

# @module


class Encoder(nn.Module):
    def __init__(self, d_embed, d_hidden):
        super().__init__()
        self.d_hidden = d_hidden
        self.rnn = nn.LSTM(input_size=d_embed, hidden_size=d_hidden, num_layers=1, dropout=0, bidirectional=False)

    def forward(self, inputs):
        batch_size = inputs.size()[1]
        state_shape = 1, batch_size, self.d_hidden
        h0 = c0 = inputs.new_zeros(state_shape)
        outputs, (ht, ct) = self.rnn(inputs, (h0, c0))
        return ht[-1]


class Model(nn.Module):
    def __init__(self, n_embed=60, d_embed=32, d_proj=32, d_hidden=48, d_out=3):
        super().__init__()
        self.embed = nn.Embedding(n_embed, d_embed)
        self.projection = nn.Linear(d_embed, d_proj)
        self.encoder = Encoder(d_proj, d_hidden)
        self.dropout = nn.Dropout(p=0.1)
        self.relu = nn.ReLU()
        seq_in_size = 4 * d_hidden
        lin_config = [seq_in_size] * 2
        self.out = nn.Sequential(
            nn.Linear(*lin_config), self.relu, self.dropout,
            nn.Linear(*lin_config), self.relu, self.dropout,
            nn.Linear(seq_in_size, d_out))
        # @init Model

    # @methods Model
    def forward(self, premise, hypothesis):
        prem_embed = self.embed(premise)
        hypo_embed = self.embed(hypothesis)
        prem_embed = self.relu(self.projection(prem_embed))
        hypo_embed = self.relu(self.projection(hypo_embed))
        # @point Model prem_embed 9,4,32
        premise_enc = self.encoder(prem_embed)
        hypothesis_enc = self.encoder(hypo_embed)
        # @point Model premise_enc 4,48
        features = torch.cat([premise_enc, hypothesis_enc,
                              premise_enc - hypothesis_enc,
                              premise_enc * hypothesis_enc], 1)
        scores = self.out(features)
        return scores
