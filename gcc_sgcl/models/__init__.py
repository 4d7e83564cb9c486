"""Graph encoders: DGL's message passing, or plain torch on a :class:`FlatGraph` where DGL cannot reach the
device (:mod:`gcc_sgcl.models.flat`)."""
from gcc_sgcl.models.encoder import GraphEncoder, build_encoder
from gcc_sgcl.models.flat import FlatGraph, PlainPathError, model_path, to_model_input
from gcc_sgcl.models.gin import UnsupervisedGIN

__all__ = ["FlatGraph", "GraphEncoder", "PlainPathError", "UnsupervisedGIN", "build_encoder", "model_path",
           "to_model_input"]
