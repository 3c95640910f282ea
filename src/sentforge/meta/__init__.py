"""Sentence meta-embeddings (Poerner et al., 2020): combine pre-trained encoders without labels.

Methods follow the scikit-learn style on lists of member embeddings (`fit(list_of_arrays)`,
`transform(list_of_arrays)`); `MetaEncoder` wraps members and a method into an encoder.
"""

from sentforge.meta.autoencoder import AutoEncoder
from sentforge.meta.average import Average
from sentforge.meta.base import MetaMethod
from sentforge.meta.concat import Concatenation
from sentforge.meta.gcca import GCCA
from sentforge.meta.meta_encoder import MetaEncoder
from sentforge.meta.registry import method_class, method_names, register_method
from sentforge.meta.svd import SVD
from sentforge.meta.upprojection import UpProjection

__all__ = ["GCCA", "SVD", "AutoEncoder", "Average", "Concatenation", "MetaEncoder", "MetaMethod", "UpProjection",
           "method_class", "method_names", "register_method"]
