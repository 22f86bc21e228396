"""allotment.sim"""
