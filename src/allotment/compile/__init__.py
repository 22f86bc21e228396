"""Compile validated config into a CompiledConfig and a networkx allocation graph."""
