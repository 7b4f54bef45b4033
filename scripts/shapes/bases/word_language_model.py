# shapes-base: word_language_model
# shapes-inputs: input=[7,4]:i64
# shapes-wrong-input: embedding_float_index input:forward input=[7,4]
# shapes-wrong-input: rnn_rank input:forward input=[7,4,2]:i64
import torch
import torch.nn.functional as F
from torch import nn

# @module


class Model(nn.Module):
    """Container module with an encoder, a recurrent module, and a decoder."""

    def __init__(self, ntoken=50, ninp=32, nhid=32, nlayers=2, dropout=0.2):
        super().__init__()
        self.ntoken = ntoken
        self.drop = nn.Dropout(dropout)
        self.encoder = nn.Embedding(ntoken, ninp)
        self.rnn = nn.LSTM(ninp, nhid, nlayers, dropout=dropout)
        self.decoder = nn.Linear(nhid, ntoken)
        self.nhid = nhid
        self.nlayers = nlayers
        # @init Model

    # @methods Model
    def init_hidden(self, bsz):
        weight = next(self.parameters())
        return (weight.new_zeros(self.nlayers, bsz, self.nhid),
                weight.new_zeros(self.nlayers, bsz, self.nhid))

    def forward(self, input):
        hidden = self.init_hidden(input.size(1))
        emb = self.drop(self.encoder(input))
        # @point Model emb 7,4,32
        output, hidden = self.rnn(emb, hidden)
        output = self.drop(output)
        # @point Model output 7,4,32
        decoded = self.decoder(output)
        decoded = decoded.view(-1, self.ntoken)
        return F.log_softmax(decoded, dim=1), hidden
