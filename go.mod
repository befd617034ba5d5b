module github.com/ddlest/ddlest

go 1.26
