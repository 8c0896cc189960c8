"""Background knowledge: reading ontology files (load) and their RDFS entailments (rdfs)."""
