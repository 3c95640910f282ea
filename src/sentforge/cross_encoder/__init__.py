"""Cross-encoders: a transformer that scores a pair of texts read together (re-ranking, a teacher for
bi-encoders)."""

from sentforge.cross_encoder.model import CrossEncoder, is_cross_encoder_dir, load_cross_encoder

__all__ = ["CrossEncoder", "is_cross_encoder_dir", "load_cross_encoder"]
