"""importers"""
