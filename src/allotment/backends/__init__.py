"""allotment.backends"""
