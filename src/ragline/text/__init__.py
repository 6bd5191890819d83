"""Text analysis: normalization, tokenization, stopwords, stemming, Chinese segmentation."""

from ragline.text.analyzer import PRESETS, Analyzer, get_analyzer

__all__ = ["PRESETS", "Analyzer", "get_analyzer"]
