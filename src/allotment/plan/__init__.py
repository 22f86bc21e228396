"""allotment.plan"""
