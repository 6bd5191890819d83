"""Agentic RAG: a multi-hop loop with a retrieval grader and stopping rules, tools, and traces.

``loop`` (the ``agent`` reader: decompose, retrieve hop by hop, grade, escalate, bridge, read),
``decompose`` (rule-based and LLM decomposers, bridge extraction), ``grader`` (the ``lexical``
grader), ``tools`` (a ReAct loop over search, lookup, calculate and finish), ``calculator`` (the
AST-whitelisted arithmetic evaluator) and ``trace`` (per-step JSONL records and their rendering).
"""
