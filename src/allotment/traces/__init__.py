"""allotment.traces"""
