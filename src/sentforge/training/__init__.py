"""Training engine, optimisers and schedules, tokenizer training and pre-training from scratch."""
