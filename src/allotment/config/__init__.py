"""allotment.config"""
